import { ApiError } from '../api';

/** A spinner-free loading line, announced politely to screen readers. */
export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      {label}…
    </p>
  );
}

/** An error from the API, with the service's own message; `onRetry` offers to try again. */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError && error.code !== 'HTTP_ERROR' && error.code !== 'NETWORK_ERROR' ? error.code : null;
  return (
    <div className="error" role="alert">
      <p>
        <strong>Something went wrong:</strong> {message}
        {code ? <span className="muted"> ({code})</span> : null}
      </p>
      {onRetry ? (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** A short confirmation after an action, announced to screen readers. */
export function Notice({ children }: { children: React.ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

/** Query states in one place: loading line, error with retry, or the content. */
export function QueryState<T>({
  query,
  children,
  label,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };
  children: (data: T) => React.ReactNode;
  label?: string;
}) {
  if (query.error) return <ErrorMessage error={query.error} onRetry={() => void query.refetch()} />;
  if (query.isPending || query.data === undefined) return <Loading label={label} />;
  return <>{children(query.data)}</>;
}
