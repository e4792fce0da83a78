type Child = Node | string | number | false | null | undefined;
type Props = Record<string, string | boolean | ((event: Event) => void) | undefined>;

/** The children worth showing, as nodes or text (never parsed as HTML). */
const nodes = (children: Child[]) =>
  children
    .filter((child): child is Node | string | number => child !== false && child !== null && child !== undefined)
    .map((child) => (child instanceof Node ? child : String(child)));

/** Creates an element: string props become attributes, `on*` functions listeners; text is always text, never HTML. */
export function h(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else if (typeof value === "string") element.setAttribute(name, value);
  }
  element.append(...nodes(children));
  return element;
}

/** Replaces what `parent` shows. */
export function show(parent: HTMLElement, ...children: Child[]): void {
  parent.replaceChildren(...nodes(children));
}

export const loading = (what = "Loading…") => h("p", { class: "loading" }, what);

/** Dates as the reader's locale shows them. */
export const when = (iso: string) => new Date(iso).toLocaleString();

/** Runs `work` with the button disabled and saying what is happening; the button comes back as it was. */
export async function busy<T>(button: HTMLButtonElement, label: string, work: () => Promise<T>): Promise<T> {
  const before = button.textContent;
  button.disabled = true;
  button.textContent = label;
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.textContent = before;
  }
}
