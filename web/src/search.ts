import type { SearchHit } from "./api";
import type { App } from "./app";
import { h } from "./dom";
import { pagedList, postCard } from "./views";

/** Results the search page adds per "Load more". */
const SEARCH_PAGE = 10;

/** The snippet's text, with each word the search found marked (as text, never HTML). */
function marked({ text, marks }: SearchHit["snippet"]): HTMLElement {
  const paragraph = h("p", { class: "content snippet" });
  let at = 0;
  for (const [start, end] of marks) {
    paragraph.append(text.slice(at, start), h("mark", {}, text.slice(start, end)));
    at = end;
  }
  paragraph.append(text.slice(at));
  return paragraph;
}

/** The search box of the header: goes to the results page for what was typed. */
export function searchForm(app: App, current = ""): HTMLElement {
  const input = h("input", {
    type: "search",
    name: "q",
    "aria-label": "Search posts",
    placeholder: "Search posts",
    maxlength: "200",
    required: true,
  }) as HTMLInputElement;
  input.value = current;
  const form = h("form", { role: "search", class: "search" }, input, h("button", { type: "submit", class: "secondary" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    app.go(`#/search/${encodeURIComponent(input.value.trim())}`);
  });
  return form;
}

/** The posts holding the words, most relevant first, with their snippets; "Load more"; what to try when none do. */
export function searchView(app: App, q: string): void {
  const empty = `No post holds "${q}". Try fewer words, another form of a word (search finds "partitions" for "partition"), or a word of a title. Common words such as "the" find nothing.`;
  app.view.replaceChildren(
    h("h1", {}, `Posts about "${q}"`),
    pagedList<SearchHit>(app, `/search?q=${encodeURIComponent(q)}`, SEARCH_PAGE, (hit) => postCard(hit, marked(hit.snippet)), empty),
  );
}
