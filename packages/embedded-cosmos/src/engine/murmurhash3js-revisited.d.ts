/** The one function of murmurhash3js-revisited the embedded server uses (the package ships no types). */
declare module "murmurhash3js-revisited" {
  const murmur: { x64: { hash128(bytes: Uint8Array, seed?: number): string } };
  export default murmur;
}
