import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import type { InstanceRecord } from "./store";

/** How an instance's span is labelled: the app gives its own vocabulary, which its dashboards read. */
export interface InstanceSpanNaming {
  /** The tracer's name. */
  scope: string;
  /** What a span of an instance of `name` starts with. */
  attributes(name: string, instanceId: string): Attributes;
  /** The attribute the instance's runtime status is written to when it ends. */
  outcome: string;
}

/** Without the app's naming: the orchestration's name and instance id as they are. */
export const DEFAULT_SPAN_NAMING: InstanceSpanNaming = {
  scope: "local-host",
  attributes: (name, instanceId) => ({ "durable.orchestration.name": name, "durable.orchestration.instance_id": instanceId }),
  outcome: "durable.outcome",
};

/**
 * One span per orchestration instance, as the Durable Functions extension's distributed tracing
 * makes one: a child of the trace its starter was in (the `traceparent` the package's client sends
 * with startNew, kept with the instance), and the parent of its activities and sub-orchestrations.
 * Spans live in memory: after a restart an instance that goes on gets a new one in the same trace.
 */
export class InstanceSpans {
  private readonly spans = new Map<string, Span>();

  constructor(private readonly naming: InstanceSpanNaming = DEFAULT_SPAN_NAMING) {}

  /** The context an instance's work runs in: its span, active. */
  contextOf(record: InstanceRecord): Context {
    return trace.setSpan(ROOT_CONTEXT, this.spanOf(record));
  }

  /** The W3C traceparent of an instance's span, for a sub-orchestration it starts. */
  traceParentOf(record: InstanceRecord): string | undefined {
    const carrier: Record<string, string> = {};
    propagation.inject(this.contextOf(record), carrier);
    return carrier.traceparent;
  }

  end(record: InstanceRecord): void {
    const span = this.spans.get(record.instanceId);
    if (!span) return;
    if (record.runtimeStatus === "Failed") span.setStatus({ code: SpanStatusCode.ERROR, message: record.failure });
    span.setAttribute(this.naming.outcome, record.runtimeStatus);
    span.end();
    this.spans.delete(record.instanceId);
  }

  /** Ends every open span (the host stops; the instances go on after a restart, in new spans). */
  endAll(): void {
    for (const span of this.spans.values()) span.end();
    this.spans.clear();
  }

  private spanOf(record: InstanceRecord): Span {
    let span = this.spans.get(record.instanceId);
    if (!span) {
      const parent = record.traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: record.traceParent }) : ROOT_CONTEXT;
      span = trace
        .getTracer(this.naming.scope)
        .startSpan(`orchestration ${record.name}`, { kind: SpanKind.INTERNAL, attributes: this.naming.attributes(record.name, record.instanceId) }, parent);
      this.spans.set(record.instanceId, span);
    }
    return span;
  }
}
