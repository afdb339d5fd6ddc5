/**
 * The TLS listener's refusal of a client certificate that did not verify (tls-listener.ts says
 * why it is in band): what the socket's verification said, and the frame that refuses it.
 */
import type { TLSSocket } from 'node:tls';
import { ErrorCode, frame } from '@tenure/protocol';

/** A bare reply header (xid 0, zxid 0, AUTHFAILED) where the ConnectResponse would be. */
export function certificateRefusalFrame(): Buffer {
  const header = Buffer.alloc(16);
  header.writeInt32BE(ErrorCode.AUTHFAILED, 12);
  return frame(header);
}

interface VerifyingHandle {
  verifyError?: () => (Error & { code?: string }) | null;
}

/**
 * OpenSSL's verification of the peer's certificate: undefined when it verified, otherwise its
 * code (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `CERT_HAS_EXPIRED`, ...). Node's tls.Server reads the
 * same (TLSWrap.verifyError) to set `authorized`; a TLSSocket of our own does not set it, so we
 * ask the handle. Without that method nothing counts as verified.
 */
export function verifyErrorOf(socket: TLSSocket): string | undefined {
  const handle = (socket as unknown as { _handle?: VerifyingHandle })._handle;
  if (typeof handle?.verifyError !== 'function') return 'UNVERIFIABLE';
  const err = handle.verifyError();
  if (err === null || err === undefined) {
    // No error and no certificate cannot happen with FAIL_IF_NO_PEER_CERT; without it (want mode), it is no identity.
    return socket.getPeerCertificate()?.raw === undefined ? 'NO_PEER_CERTIFICATE' : undefined;
  }
  return err.code ?? err.message;
}
