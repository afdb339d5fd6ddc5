/**
 * What the TLS listener needs from Node's TLS beyond a `TLSSocket` of its own (tls-listener.ts says
 * why it does not use `tls.Server`): the secure context `tls.Server` would build, the socket's
 * certificate verification, and the frame that refuses a certificate that did not verify.
 */
import { createHash } from 'node:crypto';
import { createSecureContext, type SecureContext, type TLSSocket, type TlsOptions } from 'node:tls';
import { ErrorCode, frame } from '@tenure/protocol';

interface ServerContextHandle {
  setSessionIdContext?: (id: string) => void;
  setSessionTimeout?: (seconds: number) => void;
  setTicketKeys?: (keys: Buffer) => void;
}

/**
 * The secure context as `tls.Server` sets it up. The session id context matters: with client
 * certificates requested, OpenSSL refuses to resume a session without one (an internal_error
 * alert), so a client that resumes (Java's does) could not reconnect. Same default as Node's.
 */
export function serverContext(options: TlsOptions): SecureContext {
  const context = createSecureContext(options);
  const handle = (context as unknown as { context?: ServerContextHandle }).context;
  const id = options.sessionIdContext ?? createHash('sha1').update(process.argv.join(' ')).digest('hex').slice(0, 32);
  handle?.setSessionIdContext?.(id);
  if (options.sessionTimeout !== undefined) handle?.setSessionTimeout?.(options.sessionTimeout);
  if (options.ticketKeys !== undefined) handle?.setTicketKeys?.(options.ticketKeys);
  return context;
}

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
