package serve

// calibrateRoutes registers this file's pages (filled in by its owner).
func (s *Server) calibrateRoutes() {}
