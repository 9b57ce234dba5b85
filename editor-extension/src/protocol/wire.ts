/**
 * How a payload may arrive: an older or faulty peer can leave out any field or send null. The
 * payload types of this folder are what the protocol promises; code that checks every field of
 * what the server sent (rather than trust its declared type) reads it as `Wire<T>`.
 */
export type Wire<T> = { [K in keyof T]?: T[K] | null };
