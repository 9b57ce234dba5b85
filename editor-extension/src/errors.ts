/** Error helpers with no vscode import (unit tests load them). */

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === "object" && "message" in e && typeof (e as { message: unknown }).message === "string") {
    return (e as { message: string }).message;
  }
  return String(e);
}

export function errorCode(e: unknown): number | undefined {
  if (e && typeof e === "object" && "code" in e && typeof (e as { code: unknown }).code === "number") {
    return (e as { code: number }).code;
  }
  return undefined;
}
