/** The small limits both runtimes run the limits suite with (read by vitest.workers.config.ts too). */
export const testLimits = {
  EDGEPILOT_MAX_NAMES_PER_REQUEST: "50",
  EDGEPILOT_MAX_REQUEST_BYTES: "8192",
  EDGEPILOT_MAX_STREAMS: "3",
};
