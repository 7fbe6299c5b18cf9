// Response headers of the answers that carry a secret (a token set, an API key's secret).

/** No cache or proxy may keep the answer. */
export const NO_STORE = { 'Cache-Control': 'no-store' };

/** A token set also says `Pragma: no-cache`, for HTTP/1.0 caches (RFC 6749, section 5.1). */
export const NO_STORE_TOKENS = { ...NO_STORE, Pragma: 'no-cache' };
