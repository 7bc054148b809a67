// The agent tools cut output pages exactly as the server serves them: one implementation, in the protocol.
export { outputPage, outputText, pageWithinBytes } from "@tapedeck/protocol";
