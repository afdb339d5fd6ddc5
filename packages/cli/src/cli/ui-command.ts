/** `tenure ui`: the web page (src/ui/), served until Ctrl-C. */
import { startUi, UiOptionsError, DEFAULT_UI_PORT } from '../ui/index.js';
import { about } from './command-about.js';
import type { CommandSpec } from './command-spec.js';
import { UsageError } from './usage-error.js';
import { intFlag, limitFlag } from './zk-commands.js';
import { DEFAULT_WALK_LIMIT } from '../inspect/index.js';

const ui: CommandSpec = {
  ...about('ui'),
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    write: { type: 'boolean' },
    'ui-auth': { type: 'string' },
    limit: { type: 'string' },
  },
  args: { min: 0, max: 1 },
  pathArgs: [0],
  async run({ client, out, options, signal }, { args, flags }) {
    const port = intFlag(flags, 'port', DEFAULT_UI_PORT)!;
    const host = typeof flags.host === 'string' ? flags.host : undefined;
    const uiAuth = typeof flags['ui-auth'] === 'string' ? flags['ui-auth'] : undefined;
    let server;
    try {
      server = await startUi({
        client,
        connectString: options.server,
        port,
        write: flags.write === true,
        limit: limitFlag(flags, DEFAULT_WALK_LIMIT),
        signal,
        ...(host !== undefined ? { host } : {}),
        ...(uiAuth !== undefined ? { uiAuth } : {}),
        ...(args[0] !== undefined ? { path: args[0] } : {}),
      });
    } catch (err) {
      if (err instanceof UiOptionsError) throw new UsageError(`ui: ${err.message}`);
      throw err;
    }
    const mode = flags.write === true ? 'writes enabled' : 'read-only';
    const live = server.live === 'push' ? 'live' : 'polling (the server refuses persistent watches)';
    if (out.json) out.document({ url: server.url, live: server.live, write: flags.write === true, auth: uiAuth !== undefined });
    else out.line(`tenure ui: ${server.url} (${mode}, ${live}${uiAuth !== undefined ? ', basic auth' : ''}); Ctrl-C to stop`);
    await server.closed;
  },
};

export const UI_COMMANDS: readonly CommandSpec[] = [ui];
