import { maskedNoteText, type MaskedNote } from "@/lib/api/masking";

/** A small "masked" badge whose title lists what the caller's role does not see (nothing when nothing was masked). */
export function MaskedBadge({ notes, label = "masked" }: { notes: readonly MaskedNote[] | undefined; label?: string }) {
  if (!notes?.length) return null;
  const text = notes.map(maskedNoteText).join("; ");
  return (
    <span
      data-testid="masked-badge"
      title={`Masked for your role (MASK_RULES): ${text}`}
      className="ml-1 rounded bg-amber-100 px-1 text-[10px] text-amber-800 dark:bg-amber-900 dark:text-amber-200"
    >
      {label}
    </span>
  );
}
