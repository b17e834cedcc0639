"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { deleteSilence, postSilence } from "@/lib/query-options";
import { needsToken, useWorkshopToken } from "../workshop/token";

/** Silence writes with the workshop token; answers refresh the alerts and silences. */
export function useSilenceWrites() {
  const qc = useQueryClient();
  const tok = useWorkshopToken();
  const done = () =>
    Promise.all([qc.invalidateQueries({ queryKey: ["alerts"] }), qc.invalidateQueries({ queryKey: ["silences"] })]);
  const onError = (e: unknown) => needsToken(e) && tok.show();
  const create = useMutation({
    mutationFn: (b: Parameters<typeof postSilence>[0]) => postSilence(b, tok.token),
    onSuccess: done,
    onError,
  });
  const expire = useMutation({ mutationFn: (id: string) => deleteSilence(id, tok.token), onSuccess: done, onError });
  return { create, expire, tok };
}
