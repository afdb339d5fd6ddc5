/**
 * The maxBufferBytes check of the in-process transport. ZooKeeper closes a connection whose frame
 * payload (header + record) is larger than jute.maxbuffer; the in-process transport measures the
 * same payload. The bound and the rule are @tenure/protocol's, shared with the client's own check;
 * this module keeps the server's names.
 */
export { exceedsMaxBuffer, requestSizeBound } from '@tenure/protocol';
