/** ZooKeeper's four-letter words (wire doc §6.10): a fresh connection, 4 ASCII bytes, a text answer. */
import { connect } from 'node:net';
import { TimeoutError } from '@tenure/protocol';

/** Sends `word` (e.g. 'ruok', 'srvr', 'dump') to `host:port` and resolves the answer text. */
export function fourLetterWord(host: string, port: number, word: string, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new TimeoutError(`${word} to ${host}:${port}: no answer within ${timeoutMs} ms`, timeoutMs));
    }, timeoutMs);
    socket.on('connect', () => socket.write(word));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}
