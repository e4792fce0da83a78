// The root's tests start the embedded server as its own tests do: with the package's fixture.
export { clientFor, cosmosFixture, statusOf, type CosmosFixture } from "../../packages/embedded-cosmos/test/fixture";
