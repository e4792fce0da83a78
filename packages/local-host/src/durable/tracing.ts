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
 * One span per episode of an orchestration instance (each time its orchestrator runs and moves
 * on), ended and exported when the episode ends: so a running instance's trace reads whole, each
 * activity and sub-orchestration a child of the episode that scheduled it, every episode a child
 * of the trace its starter was in (the `traceparent` the package's client sends with startNew,
 * kept with the instance, so episodes after a restart join it too). The last episode carries the
 * outcome; an instance ended from outside (terminated) gets a span of its own for it.
 */
export class InstanceSpans {
  /** The context of each running instance's latest episode: where the work it scheduled runs. */
  private readonly latest = new Map<string, Context>();
  private readonly open = new Map<string, Span>();

  constructor(private readonly naming: InstanceSpanNaming = DEFAULT_SPAN_NAMING) {}

  /** Runs one episode of `record` in a span of its own, ended (with the instance's status) when it returns. */
  async episode<T>(record: InstanceRecord, work: () => Promise<T>): Promise<T> {
    const span = this.start(record);
    this.open.set(record.instanceId, span);
    this.latest.set(record.instanceId, trace.setSpan(ROOT_CONTEXT, span));
    try {
      return await work();
    } finally {
      this.open.delete(record.instanceId);
      this.close(record, span);
    }
  }

  /** The context an instance's work runs in: its latest episode's span (the starter's trace before any). */
  contextOf(record: InstanceRecord): Context {
    return this.latest.get(record.instanceId) ?? this.parentOf(record);
  }

  /** The W3C traceparent of an instance's latest episode, for a sub-orchestration it starts. */
  traceParentOf(record: InstanceRecord): string | undefined {
    const carrier: Record<string, string> = {};
    propagation.inject(this.contextOf(record), carrier);
    return carrier.traceparent;
  }

  /** The instance has finished: inside an episode its span says so when it ends; outside one (terminated), a span of its own does. */
  end(record: InstanceRecord): void {
    this.latest.delete(record.instanceId);
    if (!this.open.has(record.instanceId)) this.close(record, this.start(record));
  }

  /** Nothing to end: episode spans end with their episodes. */
  endAll(): void {
    this.latest.clear();
  }

  private parentOf(record: InstanceRecord): Context {
    return record.traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: record.traceParent }) : ROOT_CONTEXT;
  }

  private start(record: InstanceRecord): Span {
    return trace
      .getTracer(this.naming.scope)
      .startSpan(
        `orchestration ${record.name}`,
        { kind: SpanKind.INTERNAL, attributes: this.naming.attributes(record.name, record.instanceId) },
        this.parentOf(record),
      );
  }

  private close(record: InstanceRecord, span: Span): void {
    if (record.runtimeStatus === "Failed") span.setStatus({ code: SpanStatusCode.ERROR, message: record.failure });
    span.setAttribute(this.naming.outcome, record.runtimeStatus);
    span.end();
  }
}
