"""spcs"""
