// What the scripts that compare builds of dist/ share: how a build is loaded, and the
// codec configuration of each bench case's mode.
import path from "node:path";
import { pathToFileURL } from "node:url";

/** The URL of a build's loader (`<dist>/loader.js`), for import(). */
export const loaderUrl = (dist) => pathToFileURL(path.join(path.resolve(dist), "loader.js")).href;

/** The configuration per mode of the bench cases (ihc in 4:2:0, 4:4:4 and rgb; cell in gray). */
export const CONFIGS = {
  "420": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
  "444": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] },
  rgb: { quality: 90, encoded_color_space: "rgb" },
  gray: { quality: 90, encoded_color_space: "grayscale" },
};
