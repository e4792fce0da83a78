import { context } from "@opentelemetry/api";
import { isTracingSuppressed } from "@opentelemetry/core";
import { describe, expect, it } from "vitest";
import { suppressTracing } from "../../src/telemetry/opentelemetry-core";

describe("the adapter over @opentelemetry/core's private build path", () => {
  it("suppresses tracing as the package's public isTracingSuppressed reads it", () => {
    const active = context.active();
    expect(isTracingSuppressed(active)).toBe(false);
    expect(isTracingSuppressed(suppressTracing(active))).toBe(true);
  });
});
