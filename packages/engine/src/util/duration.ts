// One grammar for durations everywhere (toolset policies, waits, TTLs, the SDK's options): it lives in the protocol.
export { formatDuration, parseDuration } from "@tapedeck/protocol";
