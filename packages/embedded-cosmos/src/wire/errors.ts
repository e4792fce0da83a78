/** An error the embedded server answers with: Cosmos DB's status, code and message shape. */
export class CosmosError extends Error {
  /** Extra details the gateway attaches (the query plan, for a query only the SDK's pipeline can run). */
  additionalErrorInfo?: string;
  /** Response headers the error carries (a throttled request's `x-ms-retry-after-ms`). */
  headers?: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly subStatus?: number,
  ) {
    super(message);
  }

  /** The body Cosmos DB sends: `{code, message}` with the errors wrapped as the gateway does. */
  toBody(): { code: string; message: string; additionalErrorInfo?: string } {
    const body: { code: string; message: string; additionalErrorInfo?: string } = {
      code: this.code,
      message: `Message: ${JSON.stringify({ Errors: [this.message] })}`,
    };
    if (this.additionalErrorInfo) body.additionalErrorInfo = this.additionalErrorInfo;
    return body;
  }
}

export const badRequest = (message: string) => new CosmosError(400, "BadRequest", message);
export const notFound = (message = "Entity with the specified id does not exist in the system.") => new CosmosError(404, "NotFound", message);
export const conflict = (message = "Entity with the specified id already exists in the system.") => new CosmosError(409, "Conflict", message);
export const preconditionFailed = (message = "One of the specified pre-condition is not met.") => new CosmosError(412, "PreconditionFailed", message);
export const requestTimeout = (message: string) => new CosmosError(408, "RequestTimeout", message);
export const entityTooLarge = (message: string) => new CosmosError(413, "RequestEntityTooLarge", message);
