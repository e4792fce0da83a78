// The same seeded PRNG (mulberry32) the embedded server draws its faults with: the same seed gives the same data (seed, bench).
export { random } from "embedded-cosmos";

/** An integer in [min, max]. */
export const between = (rng: () => number, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));
