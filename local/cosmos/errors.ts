/** An error the embedded server answers with: Cosmos DB's status, code and message shape. */
export class CosmosError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly subStatus?: number,
  ) {
    super(message);
  }

  /** The body Cosmos DB sends: `{code, message}` with the errors wrapped as the gateway does. */
  toBody(): { code: string; message: string } {
    return { code: this.code, message: `Message: ${JSON.stringify({ Errors: [this.message] })}` };
  }
}

export const badRequest = (message: string) => new CosmosError(400, "BadRequest", message);
export const notFound = (message = "Entity with the specified id does not exist in the system.") =>
  new CosmosError(404, "NotFound", message);
export const conflict = (message = "Entity with the specified id already exists in the system.") =>
  new CosmosError(409, "Conflict", message);
export const preconditionFailed = (message = "One of the specified pre-condition is not met.") =>
  new CosmosError(412, "PreconditionFailed", message);
export const requestTimeout = (message: string) => new CosmosError(408, "RequestTimeout", message);
export const entityTooLarge = (message: string) => new CosmosError(413, "RequestEntityTooLarge", message);
