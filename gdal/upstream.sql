-- The comids upstream of the Yahara outlet 13293970, computed independently of
-- hydroplot: a recursive CTE down the sample's Hydroseq -> DnHydroseq links.
-- The sample (tests/data/yahara_sample.gpkg) is attached as schema `s`.
-- Read by gdal/ci.sh and gdal/test_qgis.py.
WITH RECURSIVE up(h) AS (
  SELECT Hydroseq FROM s.NHDFlowline_Network WHERE COMID = 13293970
  UNION SELECT f.Hydroseq FROM s.NHDFlowline_Network f JOIN up ON f.DnHydroseq = up.h)
SELECT COMID FROM s.NHDFlowline_Network WHERE Hydroseq IN (SELECT h FROM up)
