import { Link } from 'react-router';
import { useTitle } from '../components/Layout';

export function NotFound() {
  useTitle('Page not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/">Go to your start page</Link>.
      </p>
    </>
  );
}
