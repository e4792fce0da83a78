/**
 * The article's published request charges (its summary table), V1 and V3, per request. The cost
 * model is fitted on the V1 column and judged on the held-out V3 column; the benchmark prints
 * both beside the model's figures.
 */
export const ARTICLE_RU: Record<"v1" | "v3", Record<string, number>> = {
  v1: { C1: 5.71, Q1: 1, C2: 8.76, Q2: 19.54, Q3: 619.41, C3: 8.57, Q4: 27.72, C4: 7.05, Q5: 58.92, Q6: 2063.54 },
  v3: { C1: 5.71, Q1: 1, C2: 8.76, Q2: 1, Q3: 6.46, C3: 15.27, Q4: 7.72, C4: 14.67, Q5: 8.92, Q6: 16.97 },
};
