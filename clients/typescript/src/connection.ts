/** How a client reaches the server: address, TLS or mutual TLS, API key, default deadline, retries. */
import { readFileSync } from "node:fs";
import { ChannelCredentials, credentials, Metadata, type ChannelOptions } from "@grpc/grpc-js";
import type { RetryPolicy } from "./retry";

/** TLS settings. PEM contents may be given directly or as file paths. */
export interface TlsOptions {
  /** CA bundle that verifies the server; unset: the system's root certificates. */
  caFile?: string;
  ca?: Buffer | string;
  /** Client certificate and key, for servers that require mutual TLS. */
  certFile?: string;
  cert?: Buffer | string;
  keyFile?: string;
  key?: Buffer | string;
  /** Host name to verify the server certificate against instead of the address's host. */
  serverName?: string;
}

/** Options of a GroundwireClient. */
export interface ClientOptions {
  /** TLS settings; `true` for TLS with the system roots. Unset or `false`: plaintext. */
  tls?: TlsOptions | boolean;
  /** API key, sent on every call as `authorization: Bearer <key>`. */
  apiKey?: string;
  /** Default time each call may take, in milliseconds (unset: no deadline). */
  timeoutMs?: number;
  /** Retry policy of every call, merged over the defaults; `false` disables retries. */
  retry?: Partial<RetryPolicy> | false;
  /** Extra grpc-js channel options. */
  channelOptions?: ChannelOptions;
}

/** Largest message the client sends or accepts (the server's default limit). */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** The channel credentials for `tls`. */
export function channelCredentials(tls: TlsOptions | boolean | undefined): ChannelCredentials {
  if (tls === undefined || tls === false) {
    return credentials.createInsecure();
  }
  const options = tls === true ? {} : tls;
  const ca = pem(options.ca, options.caFile);
  const cert = pem(options.cert, options.certFile);
  const key = pem(options.key, options.keyFile);
  if ((cert === null) !== (key === null)) {
    throw new Error("mutual TLS needs both a client certificate and its key: set tls.certFile and tls.keyFile");
  }
  return credentials.createSsl(ca, key, cert);
}

/** Channel options: message size limits, the TLS server name override, then the caller's. */
export function channelOptions(options: ClientOptions): ChannelOptions {
  const tls = typeof options.tls === "object" ? options.tls : undefined;
  return {
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    ...(tls?.serverName === undefined ? {} : { "grpc.ssl_target_name_override": tls.serverName }),
    ...options.channelOptions,
  };
}

/** Metadata sent with every call: the API key, when there is one. */
export function callMetadata(apiKey: string | undefined): Metadata {
  const metadata = new Metadata();
  if (apiKey !== undefined && apiKey !== "") {
    metadata.set("authorization", `Bearer ${apiKey}`);
  }
  return metadata;
}

function pem(value: Buffer | string | undefined, file: string | undefined): Buffer | null {
  if (value !== undefined) {
    return Buffer.isBuffer(value) ? value : Buffer.from(value, "utf-8");
  }
  return file === undefined ? null : readFileSync(file);
}
