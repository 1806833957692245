import { apiRequest } from "./client.ts";

/**
 * Downloads an API file (CSV template, batch report) with the bearer token: a plain link cannot
 * carry the Authorization header, so the file is fetched and handed to the browser as a blob.
 */
export async function downloadFile(path: string, fallbackName: string): Promise<void> {
  const response = await apiRequest(path, { headers: { Accept: "*/*" } });
  const disposition = response.headers.get("Content-Disposition") ?? "";
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  try {
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has started the download; the blob URL is no longer needed after this task.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}
