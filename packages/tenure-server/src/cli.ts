/** The tenure-server command's entry: bin/tenure-server.js runs the built copy of this file. */
import { main } from './main.js';

await main(process.argv.slice(2));
