/**
 * @tenure/cli: the `tenure` command (see README.md) and, for programs and the web page, the recipe
 * inspection it is built on: locks with holders and queues, elections, groups, services, queues
 * and sessions, read from Curator's and Tenure's node layouts.
 */
export * from './inspect/index.js';
export { main, type MainIo } from './main.js';
export { startUi, UiOptionsError, DEFAULT_UI_PORT, type UiOptions, type UiServer } from './ui/index.js';
