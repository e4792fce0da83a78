/** Outcomes the API reports as client errors; mapped to problem+json in one place (api/problems.ts). */
export type ProblemKind = "invalid" | "unauthorized" | "forbidden" | "notFound" | "conflict" | "preconditionFailed" | "tooLarge";

export class DomainError extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly errors?: { path: string; message: string }[],
  ) {
    super(detail);
  }
}

export const notFound = (detail: string) => new DomainError("notFound", detail);
export const conflict = (detail: string) => new DomainError("conflict", detail);
export const forbidden = (detail: string) => new DomainError("forbidden", detail);
export const preconditionFailed = (detail = "The resource has changed since it was read (If-Match does not match).") =>
  new DomainError("preconditionFailed", detail);
export const invalid = (detail: string, errors?: { path: string; message: string }[]) => new DomainError("invalid", detail, errors);
export const unauthorized = (detail: string) => new DomainError("unauthorized", detail);
export const tooLarge = (detail: string) => new DomainError("tooLarge", detail);
