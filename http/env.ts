// Checks shared by the configuration readers (http/app.ts configFromEnv, http/feeds.ts): each throws an Error
// naming the variable, so a bad setting stops the start with a message that says what to fix.

/** An integer variable within [min, max]; `dflt` when unset or empty. */
export function envInt(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

/** An absolute http(s) URL (`parse` is what is parsed, `raw` what the message shows; `hint` follows "URL"). */
export function httpUrl(name: string, raw: string, parse: string = raw, hint = ''): URL {
  let url: URL;
  try {
    url = new URL(parse);
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL${hint}, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${name} must be http(s), got ${url.protocol}`);
  return url;
}
