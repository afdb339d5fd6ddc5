/** The errors @tenure/etcd throws; each a TenureError with a string code. */
import { TenureError } from '@tenure/protocol';

/** etcd could not be reached, or refused a call (its gRPC status is in `grpcCode`). */
export class EtcdUnavailableError extends TenureError {
  override name = 'EtcdUnavailableError';
  constructor(
    message: string,
    readonly grpcCode?: number,
    options?: { cause?: unknown },
  ) {
    super('EtcdUnavailableError', message, options);
  }
}

/** The prefix holds a layout this version does not know (written by a newer Tenure, or by something else). */
export class EtcdLayoutError extends TenureError {
  override name = 'EtcdLayoutError';
  constructor(message: string) {
    super('EtcdLayoutError', message);
  }
}

/** The TLS handshake with etcd failed (a CA that does not sign etcd's certificate, a client certificate etcd refuses). */
export class EtcdTlsError extends EtcdUnavailableError {
  override name = 'EtcdTlsError';
  override readonly code = 'EtcdTlsError';
}
