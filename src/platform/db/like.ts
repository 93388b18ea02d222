/** Escape LIKE/ILIKE wildcards so user text matches literally (default escape character \). */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A LIKE pattern matching `text` literally anywhere (%, _ and \ escaped; escape char is \). */
export const containsPattern = (text: string) => `%${escapeLike(text)}%`;
