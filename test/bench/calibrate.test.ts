import { describe, expect, it } from "vitest";
import { NO_COST, requestUnits, type CostFeatures } from "embedded-cosmos";
import { fit, relativeError } from "../../bench/calibrate";

/** npm run calibrate fits the embedded server's cost model by non-negative least squares: the fit must find what made the charges. */
describe("the calibration", () => {
  it("recovers the coefficients that made a set of charges, and measures its error on others", () => {
    const truth: CostFeatures = { ...NO_COST, reads: 1, writes: 5, indexTerms: 0.4, queries: 2.5, loadedItems: 0.2 };
    const rows: CostFeatures[] = [
      { ...NO_COST, reads: 1 },
      { ...NO_COST, writes: 1, indexTerms: 3 },
      { ...NO_COST, writes: 2, indexTerms: 10 },
      { ...NO_COST, queries: 1, loadedItems: 10 },
      { ...NO_COST, queries: 3, loadedItems: 100 },
      { ...NO_COST, reads: 2, queries: 1, loadedItems: 5 },
    ];
    const targets = rows.map((r) => requestUnits(r, truth));
    const fitted = fit(rows, targets, { reads: 1, readExtraKb: 0, writtenKb: 0, returnedKb: 0, scripts: 0 });
    for (const key of ["writes", "indexTerms", "queries", "loadedItems"] as const) expect(fitted[key]).toBeCloseTo(truth[key], 2);
    expect(relativeError(rows, targets, fitted)).toBeLessThan(0.01);
  });
});
