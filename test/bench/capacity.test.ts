import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { capacityFigures, LIKE_BATCHES } from "../../bench/capacity";

/**
 * docs/capacity.md is written from the cost model (`npm run capacity`): each figure it gives per
 * request, per like in a batch and per pipeline change must still be what the model says of the
 * code as it is. A change to the code or the model that moves one fails here until the page is
 * rewritten. Rounding on the page allows a few percent.
 */
const page = readFileSync(join(__dirname, "../../docs/capacity.md"), "utf8");

/** The cells of the table row whose first cell starts with `label`, in the table whose header names `column`. */
function cell(column: string, label: string): number {
  const tables = page.split(/\n\n/).filter((block) => block.startsWith("|") && block.split("\n")[0].includes(column));
  for (const table of tables) {
    const [header, , ...rows] = table.split("\n").map((line) => line.split("|").map((c) => c.trim()));
    const row = rows.find((cells) => cells[1].startsWith(label));
    if (row) return Number(row[header.indexOf(column)].replace(/,/g, ""));
  }
  throw new Error(`docs/capacity.md has no row '${label}' under '${column}'`);
}

describe("docs/capacity.md", () => {
  it("gives the cost model's figures for every request, a like in a batch, the pipeline's work per change and leaving", async () => {
    const figures = await capacityFigures();
    const close = (documented: number, model: number) => expect(Math.abs(documented - model) / model).toBeLessThan(0.04);
    for (const [id, ru] of Object.entries(figures.requests)) close(cell("RU (model)", `${id} `), ru);
    for (const batch of LIKE_BATCHES) close(cell("RU per like (model)", String(batch)), figures.likeInBatchOf[batch]);
    close(cell("RU (model)", "new post"), figures.newPostPipeline);
    close(cell("RU (model)", "counter change"), figures.counterChangePipeline);
    close(cell("RU (model)", "comment or like, the first of its writer on the post"), figures.contributionPipeline.first);
    close(cell("RU (model)", "comment or like, its writer's again"), figures.contributionPipeline.again);
    close(cell("RU (model)", "export, posts"), figures.leaving.exportPosts);
    close(cell("RU (model)", "export, writing"), figures.leaving.exportWriting);
    close(cell("RU (model)", "erasure, own posts"), figures.leaving.eraseOwnPosts);
    close(cell("RU (model)", "erasure, writing"), figures.leaving.eraseWriting);
  }, 120_000);
});
