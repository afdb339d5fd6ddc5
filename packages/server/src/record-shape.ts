/**
 * Shape checks for request records arriving without serialization (the in-process transport).
 * A record that could not have been decoded from jute is the in-process form of a malformed
 * frame; the server answers it MARSHALLINGERROR, as ZooKeeper does for a body it cannot read.
 * Unknown op codes are not checked here (they get UNIMPLEMENTED and a close).
 *
 * The checks themselves walk @tenure/protocol's op table; this module keeps the server's names.
 */
export { isKnownOp, requestProblem as recordProblem } from '@tenure/protocol';
