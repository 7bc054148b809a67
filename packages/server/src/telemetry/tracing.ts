/**
 * OpenTelemetry tracing for a `tapedeck` process (`serve`, `run`, `resume`, `fork`), set up only
 * when the standard variables ask for an exporter: `OTEL_TRACES_EXPORTER=otlp` (or `console`), or
 * an `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` with no
 * `OTEL_TRACES_EXPORTER` (`none` turns it off). Spans go over OTLP/HTTP (JSON), batched; the
 * exporter reads the rest of the `OTEL_EXPORTER_OTLP_*` variables itself (headers, timeout), the
 * resource `OTEL_SERVICE_NAME` (default `tapedeck`) and `OTEL_RESOURCE_ATTRIBUTES`. Span ids
 * come from the runs' journals (`TapedeckIdGenerator`). Without these variables nothing is
 * loaded: the engine's spans go to the API's no-op tracer (docs/design/telemetry.md).
 */
export interface Tracing {
  /** What it exports to, for the log. */
  readonly exporter: string;
  /** Sends the spans still batched, then stops. */
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Which exporter the variables ask for; undefined: none. Throws on one this build cannot make. */
export function tracesExporter(env: Env): "otlp" | "console" | undefined {
  const asked = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (asked === undefined || asked === "") return env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? "otlp" : undefined;
  const names = asked.split(",").map((name) => name.trim());
  if (names.includes("none")) return undefined;
  if (names.includes("otlp")) return "otlp";
  if (names.includes("console")) return "console";
  throw new Error(`OTEL_TRACES_EXPORTER=${asked} is not one tapedeck can export to: use otlp (OTLP over HTTP), console, or none.`);
}

/** Registers the tracer provider the variables ask for; undefined (and nothing loaded) when they ask for none. */
export async function startTracing(env: Env = process.env): Promise<Tracing | undefined> {
  const kind = tracesExporter(env);
  if (kind === undefined) return undefined;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (kind === "otlp" && protocol !== undefined && protocol !== "http/json")
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: tapedeck exports traces over OTLP/HTTP with JSON only; set it to http/json or unset it.`);
  // Loaded only now: a process that exports nothing never loads the SDK (nor `tapedeck --help` the engine).
  const [{ trace }, { TapedeckIdGenerator }, { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, { OTLPTraceExporter }, resources] =
    await Promise.all([
      import("@opentelemetry/api"),
      import("@tapedeck/engine"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = resources;
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": "tapedeck" }))
    .merge(detectResources({ detectors: [envDetector] }));
  const exporter = kind === "otlp" ? new OTLPTraceExporter() : new ConsoleSpanExporter();
  const provider = new BasicTracerProvider({ resource, idGenerator: new TapedeckIdGenerator(), spanProcessors: [new BatchSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  const where =
    kind === "console"
      ? "the console"
      : (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://localhost:4318").replace(/\/+$/, "")}/v1/traces`);
  return {
    exporter: where,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
    },
  };
}
