/**
 * One reusable JuteWriter for encoders that do not know their size up front: encode into it, then copy
 * exactly the written bytes out. One allocation per message and no growth on the steady state.
 * Encoding is synchronous, so a single writer suffices; a nested use just gets a fresh one.
 */
import { JuteWriter } from './jute-writer.js';

/** Larger writers (a 1 MB create) are dropped after use rather than pinned forever. */
const KEEP_BYTES = 64 * 1024;

let idle: JuteWriter | undefined = new JuteWriter(4096);

export function takeWriter(): JuteWriter {
  const w = idle ?? new JuteWriter(4096);
  idle = undefined;
  return w.reset();
}

export function returnWriter(w: JuteWriter): void {
  if (w.capacity <= KEEP_BYTES) idle = w;
}
