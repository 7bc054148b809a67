import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback OTLP/HTTP trace receiver for tests: takes `POST /v1/traces` in OTLP's JSON
 * encoding (what `@opentelemetry/exporter-trace-otlp-http` sends), answers as a collector does,
 * and keeps every span, flattened with its resource and scope. Anything else is a 404.
 */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** OTLP's `SpanKind`: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, string | number | boolean>> }[];
  /** OTLP's `StatusCode`: 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly resource: Readonly<Record<string, string | number | boolean>>;
  readonly scope: string;
}

export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  /** Export requests received. */
  requests(): number;
  close(): Promise<void>;
}

interface OtlpValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
}
interface OtlpKeyValue {
  readonly key: string;
  readonly value: OtlpValue;
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes?: readonly OtlpKeyValue[];
  readonly events?: readonly { readonly name: string; readonly attributes?: readonly OtlpKeyValue[] }[];
  readonly status?: { readonly code?: number };
}
interface OtlpRequest {
  readonly resourceSpans: readonly {
    readonly resource?: { readonly attributes?: readonly OtlpKeyValue[] };
    readonly scopeSpans: readonly { readonly scope?: { readonly name?: string }; readonly spans?: readonly OtlpSpan[] }[];
  }[];
}

function attributes(list: readonly OtlpKeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? [])
    out[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.doubleValue ?? value.boolValue ?? "";
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const http = createServer((request, response) => {
    if (request.method !== "POST" || request.url !== "/v1/traces") return void response.writeHead(404).end();
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests += 1;
      let body: OtlpRequest;
      try {
        if (!String(request.headers["content-type"]).startsWith("application/json")) throw new Error(`content-type ${request.headers["content-type"]}`);
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpRequest;
      } catch (error) {
        return void response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ message: String(error) }));
      }
      for (const resourceSpans of body.resourceSpans) {
        const resource = attributes(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans)
          for (const span of scopeSpans.spans ?? [])
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: String(span.startTimeUnixNano),
              endTimeUnixNano: String(span.endTimeUnixNano),
              attributes: attributes(span.attributes),
              events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributes(event.attributes) })),
              status: span.status?.code ?? 0,
              resource,
              scope: scopeSpans.scope?.name ?? "",
            });
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    spans,
    requests: () => requests,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
