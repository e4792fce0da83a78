// Which traces the Function App keeps, as Azure Monitor's distro chooses: by OTEL_TRACES_SAMPLER
// and OTEL_TRACES_SAMPLER_ARG, with the distro's two samplers of its own beside the
// OpenTelemetry specification's, and its rate-limited sampler when neither is set.
import { ApplicationInsightsSampler, RateLimitedSampler } from "@azure/monitor-opentelemetry-exporter";
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from "@opentelemetry/sdk-trace-base";

/** Traces kept per second and instance, the distro's default: a busy instance sends a sample, each span carrying its rate, never a flood. */
export const TRACES_PER_SECOND = 5;

/** The span attribute Azure Monitor's exporter reads as the percentage an item was sampled at (its itemCount is 100 / it). */
const SAMPLE_RATE = "microsoft.sample_rate";

/**
 * Azure Monitor's rate-limited sampler, except that an instance's first trace is kept. That
 * sampler estimates the rate of traces from the moment it is made, so a span soon after reads as
 * a burst: kept with a probability of 5 x the seconds since start. The worker invokes the first
 * request within milliseconds of loading the app, so the first request of every cold start, the
 * one an operator looks for, was dropped. Kept at 100 %, it counts once, and its child spans
 * (kept with their parent) follow it.
 */
export function firstTraceKept(sampler: Sampler): Sampler {
  let first = true;
  return {
    shouldSample(context, traceId, spanName, spanKind, attributes, links) {
      const result = sampler.shouldSample(context, traceId, spanName, spanKind, attributes, links);
      if (!first) return result;
      first = false;
      return { decision: SamplingDecision.RECORD_AND_SAMPLED, attributes: { ...result.attributes, [SAMPLE_RATE]: 100 } };
    },
    toString: () => `FirstTraceKept{${sampler.toString()}}`,
  };
}

/** A number, or undefined (said once) when the argument is not one. */
function numberArgument(arg: string | undefined, range?: [number, number]): number | undefined {
  if (arg === undefined) return undefined;
  const value = arg === "" ? NaN : Number(arg);
  if (Number.isNaN(value) || (range && (value < range[0] || value > range[1]))) {
    console.warn(`OTEL_TRACES_SAMPLER_ARG '${arg}' is not ${range ? `a number from ${range[0]} to ${range[1]}` : "a number"}: it is ignored.`);
    return undefined;
  }
  return value;
}

/** The ratio of a ratio sampler: all traces when the argument is missing or wrong, as the specification's default is 1. */
const ratio = (arg: string | undefined) => numberArgument(arg, [0, 1]) ?? 1;

/**
 * The sampler the settings ask for, named as Azure Monitor's distro names them:
 * `microsoft.rate_limited` (traces per second) and `microsoft.fixed_percentage` (a ratio, each
 * span carrying its rate so that Application Insights counts it right), and the specification's
 * `always_on`, `always_off`, `traceidratio` and the `parentbased_` forms (also in the distro's
 * spelling, `trace_id_ratio`). Unset, or a name it does not know (said once), the distro's
 * default: 5 traces per second, the first trace kept.
 */
export function tracesSampler(env: NodeJS.ProcessEnv): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const rateLimited = (perSecond: number) => firstTraceKept(new RateLimitedSampler(perSecond));
  switch (name) {
    case undefined:
    case "":
      return rateLimited(TRACES_PER_SECOND);
    case "microsoft.rate_limited":
      return rateLimited(numberArgument(arg) ?? TRACES_PER_SECOND);
    case "microsoft.fixed_percentage":
      return new ApplicationInsightsSampler(ratio(arg));
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
    case "trace_id_ratio":
      return new TraceIdRatioBasedSampler(ratio(arg));
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
    case "parentbased_trace_id_ratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio(arg)) });
    default:
      console.warn(`OTEL_TRACES_SAMPLER '${name}' is not a sampler Azure Monitor knows: ${TRACES_PER_SECOND} traces per second are kept.`);
      return rateLimited(TRACES_PER_SECOND);
  }
}
