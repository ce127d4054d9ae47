// The package's one error convention (docs/api.md, "Errors"). Every Error it throws has a
// `kind`, and its message begins with who refused:
//   - a codec, by the name zarr.json gives it ("jpeg: ", "imagecodecs_jpeg: ", "reshape: "),
//     for a chunk's configuration, shape or data;
//   - otherwise the package or its command ("zarr-jpeg: ", "zarr-jpeg convert: ",
//     "zarr-jpeg check: "): loading, register(), the worker pool, the converter, the checker.
// The Rust core's messages already begin with "jpeg: " and carry their kind across the
// wasm boundary.

/** An Error of the codec named `codec`, of kind `kind`. */
export function codecError(codec, kind, message, options) {
  const error = new Error(`${codec}: ${message}`, options);
  error.kind = kind;
  return error;
}

/**
 * An Error of the package itself (not of a chunk): kind "InvalidArgument",
 * "NotInitialized", "EnvironmentUnsupported", "LoadFailed" or "InstanceTrapped". `type` is the Error
 * class (TypeError, RangeError for arguments of the wrong type or range); `command` the
 * command it belongs to ("check", "convert"), if any.
 */
export function packageError(kind, message, { type = Error, cause, command } = {}) {
  const who = command ? `zarr-jpeg ${command}` : "zarr-jpeg";
  const error = new type(`${who}: ${message}`, cause === undefined ? undefined : { cause });
  error.kind = kind;
  return error;
}

/** A package Error of kind "InvalidArgument": a TypeError, or a RangeError for a value out of range. */
export function argumentError(message, type = TypeError) {
  return packageError("InvalidArgument", message, { type });
}

/** An Error from a codec's kind and message (the pool's workers send them as plain data). */
export function errorFromParts({ message, kind }) {
  const error = new Error(message);
  if (kind !== undefined) error.kind = kind;
  return error;
}
