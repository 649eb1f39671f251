import { Any, BadRequest, ErrorInfo, type ErrorDetails } from 'nice-grpc-error-details';
import { Status as RpcStatus } from 'nice-grpc-error-details/lib/proto/google/rpc/status.js';

/** The trailer that carries a failed call's google.rpc.Status (gRPC's rich error model). */
export const STATUS_DETAILS_TRAILER = 'grpc-status-details-bin';

/** The detail messages our servers attach (app-error-status.ts); others travel as `Any`. */
const KNOWN = [ErrorInfo, BadRequest] as const;

/** google.rpc.Status of a failed call, encoded for the trailer. */
export const encodeStatusDetails = (code: number, message: string, details: readonly ErrorDetails[]) =>
  RpcStatus.encode(
    RpcStatus.fromPartial({
      code,
      message,
      details: details.map((detail) => {
        if (detail.$type === Any.$type) return detail;
        const type = KNOWN.find(({ $type }) => $type === detail.$type);
        if (type === undefined) throw new Error(`unknown error details type ${detail.$type}`);
        return Any.fromPartial({
          typeUrl: `type.googleapis.com/${detail.$type}`,
          value: (type.encode as (message: ErrorDetails) => { finish(): Uint8Array })(detail).finish(),
        });
      }),
    }),
  ).finish();

/** The details of a trailer's google.rpc.Status: ours decoded, any other kept as `Any`. */
export const decodeStatusDetails = (encoded: Uint8Array): ErrorDetails[] =>
  RpcStatus.decode(encoded).details.map((detail) => {
    const type = KNOWN.find(({ $type }) => detail.typeUrl.endsWith(`/${$type}`));
    return type === undefined ? detail : type.decode(detail.value);
  });
