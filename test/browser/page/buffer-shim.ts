/**
 * The `Buffer` a browser bundle needs (the protocol's records carry Buffers): the `buffer` npm
 * package, injected by esbuild (`inject: [this file]`) wherever the bundled code names `Buffer`.
 * 'buffer/' (with the slash) is the npm package, never Node's built-in of the same name.
 */
export { Buffer } from 'buffer/';
