import Mustache from 'mustache';

/** Values a template sees: the notification's metadata and its absolute action URL. */
export type TemplateView = Record<string, unknown>;

const asIs = (value: unknown) => String(value);

/** Renders plain text (titles, in-app and push text, e-mail text part): values are not escaped. */
export const renderText = (template: string, view: TemplateView) => Mustache.render(template, view, undefined, { escape: asIs });

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (value: unknown) => String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** Renders e-mail HTML: every `{{value}}` is HTML-escaped (the five characters that matter in text and quoted attributes). */
export const renderHtml = (template: string, view: TemplateView) => Mustache.render(template, view, undefined, { escape: escapeHtml });

/** The URL the notification links to, absolute (a relative path is joined to the service's address). */
export function absoluteActionUrl(actionUrl: string | null | undefined, baseUrl: string): string | null {
  if (!actionUrl) return null;
  try {
    return new URL(actionUrl, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
  } catch {
    return null;
  }
}
