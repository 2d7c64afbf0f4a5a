package serve

// caseRoutes registers this file's pages (filled in by its owner).
func (s *Server) caseRoutes() {}
