/** A small tour of @tenure/protocol until the leader-election demo exists. */
import { CreateMode, OpCode, digestId, validatePath, InvalidPathError, KeeperError, errorCodeName } from '@tenure/protocol';

console.log('Tenure protocol demo');
console.log('create modes:', Object.keys(CreateMode).join(', '));
console.log('op codes known:', Object.keys(OpCode).length);
console.log('digest id for bob:secret ->', digestId('bob', 'secret').id);
try {
  validatePath('/a//b');
} catch (e) {
  if (e instanceof InvalidPathError) console.log('invalid path refused:', e.message);
}
const err = KeeperError.from(-101, '/missing');
console.log(`server error -101 -> ${err.name} (${errorCodeName(err.code)}): ${err.message}`);
