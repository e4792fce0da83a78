/** A one-line progress bar on stderr (a line per 10 % when stderr is not a terminal). */
export class ProgressBar {
  private done = 0;
  private lastDecile = -1;
  private readonly started = Date.now();

  constructor(
    private readonly label: string,
    private total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  setTotal(total: number): void {
    this.total = total;
  }

  tick(count = 1): void {
    this.done += count;
    this.render();
  }

  finish(summary = ""): void {
    this.done = Math.max(this.done, this.total);
    this.render(true);
    if (this.stream.isTTY) this.stream.write("\n");
    if (summary) this.stream.write(`${summary}\n`);
  }

  private render(final = false): void {
    const ratio = this.total > 0 ? Math.min(1, this.done / this.total) : 1;
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    const line = `${this.label} [${"#".repeat(Math.round(ratio * 30)).padEnd(30, ".")}] ${(ratio * 100).toFixed(0).padStart(3)}% ${this.done}/${this.total} ${seconds}s`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${line}`);
      return;
    }
    const decile = Math.floor(ratio * 10);
    if (decile > this.lastDecile || (final && this.lastDecile < 10)) {
      this.lastDecile = decile;
      this.stream.write(`${line}\n`);
    }
  }
}
