import Link from "next/link";

/** 404 inside the shell, with the way back. */
export default function NotFound() {
  return (
    <div className="space-y-2">
      <h1 className="text-xl font-semibold">Not found</h1>
      <p className="text-sm text-slate-600 dark:text-slate-300">There is no page at this address.</p>
      <Link href="/" className="text-sm text-blue-700 underline dark:text-blue-300">
        Back to the overview
      </Link>
    </div>
  );
}
