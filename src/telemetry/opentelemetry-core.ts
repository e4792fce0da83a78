// THE adapter over @opentelemetry/core's private build path. The package's index would bring all
// of core into the deployable bundle (CommonJS, so nothing is shaken off), which every cold start
// then reads; the app needs one function of it. test/telemetry/opentelemetry-core.test.ts holds
// it to the package's public `isTracingSuppressed`, so an upgrade that moves or changes it fails
// there, by name.
export { suppressTracing } from "@opentelemetry/core/build/src/trace/suppress-tracing";
