/** Escape LIKE/ILIKE wildcards so user text matches literally (default escape character \). */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
