import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { QueryState } from '../../components/Status';
import { formatDate } from '../../format';
import type { Certificate } from '../../types';

export function Certificates() {
  useTitle('Certificates');
  const certificates = useQuery({ queryKey: ['certificates'], queryFn: () => api.get<Certificate[]>('/api/certificates', { perPage: 100 }) });
  return (
    <>
      <h1>Certificates</h1>
      <QueryState query={certificates} label="Loading certificates">
        {(list) =>
          list.length === 0 ? (
            <p>Complete a course to earn its certificate.</p>
          ) : (
            <ul className="cards">
              {list.map((c) => (
                <li key={c.id} className="card">
                  <h2>{c.courseTitle}</h2>
                  <p className="small">
                    Certificate {c.certificateNumber} · issued {formatDate(c.issuedAt)}
                    {c.expiresAt ? ` · valid until ${formatDate(c.expiresAt)}` : ''}
                    {c.finalScore !== null ? ` · score ${c.finalScore}%` : ''}
                  </p>
                  <p className="small muted">Verification code: {c.verificationCode}</p>
                  {c.pdfUrl ? (
                    <div className="actions">
                      <a className="button" href={c.pdfUrl}>
                        Download the PDF<span className="visually-hidden"> certificate for {c.courseTitle}</span>
                      </a>
                    </div>
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </>
  );
}
